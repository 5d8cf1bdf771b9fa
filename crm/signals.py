"""What the CRM tells the rest of the project, sent once the change has committed.

`crm_rows_changed(contact_id=...)`: a contact's CRM rows (contact, deals, activities) changed; crm/tasks.py
queues their mirror to Pipedrive. The services send it, so they need not import the tasks that import them.
"""

from django.dispatch import Signal

crm_rows_changed = Signal()
