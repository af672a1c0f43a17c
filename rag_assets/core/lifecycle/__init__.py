"""The version lifecycle above the index: which versions are live, and why the others
are not (`versions`); the change rule (`reconcile`); removing a version from every store
(`purge`); what the last runs did (`outcomes`). The rules themselves (in force on a date,
live, searchable, superseded) are pure functions below the index: `core.rules`."""
