"""Local files as documents: readers, converters to markdown, and what a sync of them covers."""
