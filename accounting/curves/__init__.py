"""Privacy representations (PLD, RDP, zCDP, GDP) and conversions between them."""
