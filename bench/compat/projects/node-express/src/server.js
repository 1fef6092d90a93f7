const { makeApp } = require("./app");

const port = Number(process.env.PORT || 3077);
makeApp().listen(port, () => console.log(`listening on ${port}`));
