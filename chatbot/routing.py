from chatbot.channels import registry

websocket_urlpatterns = registry.websocket_urlpatterns()
