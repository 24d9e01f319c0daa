__version__ = "0.0.0.dev0"  # replaced in the wheel by the workspace version
