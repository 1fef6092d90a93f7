import { sum } from "./sum.js";
document.querySelector("#title").textContent = `sum ${sum([1, 2, 3])}`;
