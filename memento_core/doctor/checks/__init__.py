"""The doctor's checks, grouped by what they look at; each takes the :class:`~memento_core.doctor.context.Context`
and returns a :data:`~memento_core.doctor.findings.CheckResult`."""
