"""From kernels to objects: CK Tile API revisions, the jinja2 emitter, the manifest, the toolchain and the ninja
build."""
