"""The abstract interpreter: walks module code and kernel bodies with abstract values."""
