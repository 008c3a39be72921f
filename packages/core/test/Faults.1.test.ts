import { defineFaultSuite } from "./faultSuite.js"

defineFaultSuite(1)
