"""Runtime images built without a registry (RUNTIMES.md section 3, docs/patterns.md).

Each family has one recipe module (`openclaw`, `hermes`) that stages a root filesystem from
the npm registry or PyPI plus host files (`rootfs`); `build` turns it into an image on a
Docker engine with `docker import` and skips a tag already built from the same recipe.
`manage.py build_runtime_images` is the entry point.
"""
