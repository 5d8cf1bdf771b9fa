"""Developer tools that read the code (not part of the product)."""
