"""The data layer: manifest, verified fetching and preprocessing of the raw datasets."""
