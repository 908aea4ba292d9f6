"""One open production: the service's results fed into the models and kept live.

:class:`~postproject_gui.session.monitor_session.MonitorSession` (built by ``app.py``
around a :class:`~postproject_gui.services.production_service.ProductionService`) turns feed
signals into narrow reloads of the job table, the counts and the detail; it keeps what is
known about artifacts in a :class:`~postproject_gui.session.knowledge_session.KnowledgeSession`
and the registered workers in a :class:`~postproject_gui.session.worker_watch.WorkerWatch`.
"""
