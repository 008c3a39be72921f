import { defineFaultSuite } from "./faultSuite.js"

defineFaultSuite(2)
