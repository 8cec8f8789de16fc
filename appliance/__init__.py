"""Offline chatbot appliance: a small local model answers, a smaller one summarizes, code checks the facts."""

__version__ = "0.1.0"
