const request = require("supertest");
const { makeApp } = require("../src/app");

test("health", async () => {
  const res = await request(makeApp()).get("/health");
  expect(res.body).toEqual({ status: "ok" });
});

test("create and list", async () => {
  const app = makeApp();
  await request(app).post("/todos").send({ title: "write tests" }).expect(201);
  const res = await request(app).get("/todos").expect(200);
  expect(res.body).toEqual([{ id: 1, title: "write tests" }]);
});
