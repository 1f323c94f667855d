"""The recall lab.

The knobs, the preview with every score component and the exact block that would
be injected, and why a given segment was not recalled.
"""
