"""Test support: finding real services, isolating each test's topics and database."""
