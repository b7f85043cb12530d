"""The profiles that ship with cuzk (TOML files beside this module)."""
