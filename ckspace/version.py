"""ckspace's version: a leaf module (it imports nothing), so that any layer can read it without importing the
package's facade."""

__version__ = "0.1.0"
