// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

import {Test} from "../utils/Test.sol";
import {Deploy} from "../../../script/Deploy.s.sol";
import {IRiskGate} from "../../src/interfaces/IRiskGate.sol";
import {ISomniaAgents} from "../../src/interfaces/ISomniaAgents.sol";
import {SomniaVerdictSource} from "../../src/sources/SomniaVerdictSource.sol";

/// @notice The deploy script's reading of the mode (issues 35 and 36) from `GATE_ATTESTORS`,
/// `SOMNIA_*` and their settings. One test function: the variables are the process's, shared by every test thread.
contract DeployScriptAttestorsTest is Test {
    function test_readAttestors_fromTheEnvironment() public {
        Deploy script = new Deploy();
        address keeper = address(0xBEEF);

        // Unset: a relayed gate, every setting 0.
        IRiskGate.Attestors memory a = script.readAttestors(keeper);
        assertEq(a.signers.length, 0, "relayed");
        assertEq(uint256(a.threshold) + a.maxReadAge + a.maxSlippageBps, 0, "no settings");

        // A setting without attestors is refused: a forgotten list must not deploy relayed.
        vm.setEnv("GATE_MAX_READ_AGE", "7");
        vm.expectRevert(
            abi.encodeWithSelector(
                Deploy.AttestorSettingWithoutAttestors.selector, "GATE_MAX_READ_AGE"
            )
        );
        script.readAttestors(keeper);

        // Three given out of order: sorted, majority threshold 2, the read age given, 200 bps.
        vm.setEnv(
            "GATE_ATTESTORS",
            "0x0000000000000000000000000000000000000A03,0x0000000000000000000000000000000000000a01,0x0000000000000000000000000000000000000A02"
        );
        a = script.readAttestors(keeper);
        assertEq(a.signers.length, 3);
        assertEq(a.signers[0], address(0xA01));
        assertEq(a.signers[1], address(0xA02));
        assertEq(a.signers[2], address(0xA03));
        assertEq(uint256(a.threshold), 2, "3 / 2 + 1");
        assertEq(uint256(a.maxReadAge), 7);
        assertEq(uint256(a.maxSlippageBps), 200);

        // The keeper among them is refused before anything is deployed.
        vm.setEnv(
            "GATE_ATTESTORS",
            "0x0000000000000000000000000000000000000A01,0x000000000000000000000000000000000000BEEF"
        );
        vm.expectRevert(
            abi.encodeWithSelector(Deploy.TrustedListHasKeeper.selector, "GATE_ATTESTORS", keeper)
        );
        script.readAttestors(keeper);

        // A consensus gate (issue 36) has no attestors: both modes at once are refused.
        vm.setEnv("SOMNIA_PLATFORM", "0x037Bb9C718F3f7fe5eCBDB0b600D607b52706776");
        vm.expectRevert(Deploy.TwoModes.selector);
        script.readConsensusBounds();
        vm.setEnv("GATE_ATTESTORS", "");
        // GATE_MAX_READ_AGE is still 7 from above; the slippage defaults to 200.
        a = script.readConsensusBounds();
        assertEq(a.signers.length, 0);
        assertEq(uint256(a.threshold), 0);
        assertEq(uint256(a.maxReadAge), 7);
        assertEq(uint256(a.maxSlippageBps), 200);
        // The source's settings: the system text is required, the rest has the documented
        // defaults (the LLM agent, 0.07 per validator, 3 validators, a majority of 2).
        vm.expectRevert(Deploy.SomniaSystemMissing.selector);
        script.readSomnia(address(0x6A7E), a);
        vm.setEnv("SOMNIA_SYSTEM", "You are a trading agent.");
        SomniaVerdictSource.Settings memory s = script.readSomnia(address(0x6A7E), a);
        assertEq(s.gate, address(0x6A7E));
        assertEq(address(s.platform), 0x037Bb9C718F3f7fe5eCBDB0b600D607b52706776);
        assertEq(s.agentId, 12847293847561029384);
        assertEq(s.pricePerAgent, 0.07 ether);
        assertEq(uint256(s.subcommitteeSize), 3);
        assertEq(uint256(s.threshold), 2, "3 / 2 + 1");
        assertEq(uint256(s.consensusType), uint256(ISomniaAgents.ConsensusType.Majority));
        assertEq(uint256(s.maxReadAge), 7);
        assertEq(s.system, "You are a trading agent.");
        vm.setEnv("SOMNIA_CONSENSUS", "2");
        vm.expectRevert(
            abi.encodeWithSelector(Deploy.EnvValueTooLarge.selector, "SOMNIA_CONSENSUS", 2, 1)
        );
        script.readSomnia(address(0x6A7E), a);
    }
}
