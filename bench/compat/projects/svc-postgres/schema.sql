CREATE TABLE items (id serial PRIMARY KEY, name text NOT NULL);
INSERT INTO items (name) VALUES ('a'), ('b');
SELECT count(*) AS n FROM items;
