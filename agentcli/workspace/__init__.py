"""Workspaces: where the agent's processes run and its files are read and written.

The contract is `contract.Workspace`; `local.LocalWorkspace` is this machine as it is.
"""
