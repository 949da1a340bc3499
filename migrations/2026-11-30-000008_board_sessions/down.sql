DROP TABLE board_sessions;
