"""Finetuning of encoders (OneAligner's contrastive objective)."""
