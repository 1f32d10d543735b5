"""The formation core: pure functions from an episode and a policy to decisions.

No Kafka, no SQL, no clock, no randomness. Agents and projectors move bytes around it; this
package decides. That split is what makes replay deterministic and the core testable in
microseconds.
"""
