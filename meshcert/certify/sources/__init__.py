"""Package sources: where a PackageView's facts come from (local disk, the Hub)."""
