DROP TABLE fanout_grants;
