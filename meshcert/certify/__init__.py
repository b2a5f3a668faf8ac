"""The certification engine: refs -> package sources -> view -> checks -> CertReport."""
