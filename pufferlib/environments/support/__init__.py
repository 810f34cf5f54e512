"""What the family modules share and are not families themselves: batched games and child processes
(batched, child, jax_games), headless GL (rendering), the families' torch policies (policies), the JAX
families' compiled programs (jax_cache, craftax_jax, kinetix_jax) and the test cartridge (gbrom).

Nothing here registers a binding: `pufferlib/environments/` itself holds the family modules (one per row of
families.py) and the package's own API (registry, families, cli).
"""
