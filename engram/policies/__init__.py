"""The formation policy as operators write it and as the build fixes it.

:mod:`formation.policy` declares the policy (the pure core reads it); this package reads and
writes its YAML document (:mod:`policies.document`) and computes the digests the build adds to
it (:mod:`policies.source`), below the stages that use it, so the read side, corrections and
the CLI learn the policy without importing a stage."""
