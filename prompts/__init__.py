"""Model prompts as YAML data, shipped with the package; their bytes are part of the policy."""
