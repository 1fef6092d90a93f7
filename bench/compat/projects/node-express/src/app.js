const express = require("express");

function makeApp() {
  const app = express();
  app.use(express.json());
  const todos = [];
  app.get("/health", (_req, res) => res.json({ status: "ok" }));
  app.get("/todos", (_req, res) => res.json(todos));
  app.post("/todos", (req, res) => {
    const todo = { id: todos.length + 1, title: String(req.body.title || "") };
    todos.push(todo);
    res.status(201).json(todo);
  });
  return app;
}

module.exports = { makeApp };
