"""The tool pipeline: pure Python, no Jupyter imports."""
