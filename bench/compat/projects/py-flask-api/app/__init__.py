"""A small notes API: Flask with a SQLite store in the instance folder."""

import os
import sqlite3

from flask import Flask, g, jsonify, request


def create_app(db_path=None):
    app = Flask(__name__, instance_relative_config=True)
    os.makedirs(app.instance_path, exist_ok=True)
    app.config["DB"] = db_path or os.path.join(app.instance_path, "notes.sqlite")

    def db():
        if "db" not in g:
            g.db = sqlite3.connect(app.config["DB"])
            g.db.execute("CREATE TABLE IF NOT EXISTS notes (id INTEGER PRIMARY KEY, body TEXT)")
        return g.db

    @app.teardown_appcontext
    def close(_exc):
        conn = g.pop("db", None)
        if conn is not None:
            conn.close()

    @app.get("/health")
    def health():
        return jsonify(status="ok")

    @app.post("/notes")
    def add():
        body = request.get_json(force=True)["body"]
        conn = db()
        cur = conn.execute("INSERT INTO notes (body) VALUES (?)", (body,))
        conn.commit()
        return jsonify(id=cur.lastrowid), 201

    @app.get("/notes")
    def notes():
        rows = db().execute("SELECT id, body FROM notes ORDER BY id").fetchall()
        return jsonify([{"id": i, "body": b} for i, b in rows])

    return app
