"""The op library, one file per family. Each op is a ``Function`` subclass that
keeps its forward, its backward, what it saves and its gradient rule together."""
