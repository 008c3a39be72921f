import assert from "node:assert/strict"
import { test } from "node:test"
import { subtotal, total } from "../src/cart.js"

const lines = [
  { sku: "apple", priceCents: 50, qty: 4 },
  { sku: "pear", priceCents: 80, qty: 5 }
]

test("subtotal adds every line", () => {
  assert.equal(subtotal(lines), 600)
})

test("total applies the discount", () => {
  assert.equal(total(lines, 0.1), 540)
})

test("total without a discount is the subtotal", () => {
  assert.equal(total(lines), 600)
})
