// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

import {GateTestBase} from "../gate/GateTestBase.sol";
import {IRiskGate} from "../../src/interfaces/IRiskGate.sol";
import {console} from "../utils/Test.sol";

/// @notice Gas of the pure entry points as external calls from another contract, printed as
/// `GAS <name> <gas>` lines for `make bench`. Not part of `make test`: figures, not assertions.
/// Gas is deterministic for a given compiler and settings.
contract GasBench is GateTestBase {
    function test_gas_evaluatePassingBuyUp() public {
        IRiskGate.Snapshot memory s = baseSnapshot();
        gate.evaluate(s, BUY_UP); // warm the gate's account, as any call after the first would be
        uint256 g0 = gasleft();
        gate.evaluate(s, BUY_UP);
        uint256 warm = g0 - gasleft();
        console.log("GAS evaluate_pass_buy_up_warm", warm);
    }

    function test_gas_evaluatePassingBuyUpRaw() public {
        address g = address(gate);
        bytes memory data = abi.encodeCall(gate.evaluate, (baseSnapshot(), BUY_UP));
        (bool ok,) = g.staticcall(data);
        uint256 g0 = gasleft();
        (ok,) = g.staticcall(data);
        uint256 used = g0 - gasleft();
        assertTrue(ok);
        console.log("GAS evaluate_pass_buy_up_call", used);
    }

    function test_gas_evaluatePassingBuyUpCold() public {
        IRiskGate.Snapshot memory s = baseSnapshot();
        uint256 g0 = gasleft();
        gate.evaluate(s, BUY_UP);
        console.log("GAS evaluate_pass_buy_up_cold", g0 - gasleft());
    }

    function test_gas_parseVerdict() public {
        uint256 g0 = gasleft();
        gate.parseVerdict("BUY_UP");
        console.log("GAS parse_buy_up_cold", g0 - gasleft());
    }
}
