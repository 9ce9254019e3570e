"""Optional runtime checks: replay static findings on real GPU kernels (needs attn-lint[gpu])."""
