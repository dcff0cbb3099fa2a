"""Integrations with other training frameworks (veRL). Importing this package imports none of them."""
