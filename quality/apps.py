from django.apps import AppConfig


class QualityConfig(AppConfig):
    """The bench and the evaluation suite: their `bench` and `evaluate` commands; no models."""

    name = "quality"
    verbose_name = "Quality tooling"
