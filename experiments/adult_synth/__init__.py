"""Accuracy-first synthetic data on Adult (Räisä, Koskela and Honkela, Sec. 6 and App. D)."""
