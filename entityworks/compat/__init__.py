"""Where another library offers no public way to do what we need: one module per library.

Each module here is the only place that reads that library's private names, and each is
tested on the lowest and the newest supported version of its library (``.ci/run`` runs the
suite on both). Everything else imports the functions below, never the private names.
"""
