DROP TABLE fanout_grant_refs;
