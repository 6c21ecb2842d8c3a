"""BEIR datasets: loaded from their files, ingested, asked and scored under every variant."""
