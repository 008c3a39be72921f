/** Prices are in cents; a discount is a fraction, 0.1 for 10%. */
export const subtotal = (lines) => lines.reduce((sum, line) => sum + line.priceCents * line.qty, 0)

export const total = (lines, discount = 0) => Math.round(subtotal(lines) * discount)
