"""MMEngine's ``mmengine.hooks.sync_buffer_hook`` path: ``SyncBuffersHook`` is
:class:`runnerx.hooks.sync_buffers_hook.SyncBuffersHook`."""

from runnerx.hooks.sync_buffers_hook import SyncBuffersHook

__all__ = ["SyncBuffersHook"]
