"""The ``graph`` dialect: IRDL definition, op catalog, verifier, builder and reference interpreter."""
