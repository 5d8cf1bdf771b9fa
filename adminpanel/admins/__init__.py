"""The admin pages of each app (registered by adminpanel/admin.py): the console owns every admin page."""
