"""The conversation around the toolkit: parsing, the command table, rendering and the app."""
