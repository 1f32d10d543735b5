"""The wire contract: every value that crosses a Kafka topic, as versioned pydantic models.

Event models are named as facts in the past tense. API response models and model-reply models
live elsewhere even when they look alike, so the contract changes only on purpose.
"""
