DROP TABLE notify_hooks;
